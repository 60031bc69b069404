"""The six real documents of ../shared/data/realdocs, one per family (its README): built
together by the tests of citations and by the people's-questions benchmark."""

from __future__ import annotations

SIX = (
    "CELEX_32022R2554_EN_TXT.pdf",
    "asset_00100_ukpga_20100023_en.pdf",
    "ifrs-16-leases.pdf",
    "usc17.htm",
    "nda.pdf",
    "Compto AML Policy.docx",
)
