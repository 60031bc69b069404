"""Names EU acts are known by that their Official Journal text never prints.

The Official Journal publishes "Regulation (EU) 2022/2554 ... on digital operational resilience
for the financial sector"; everyone else says "DORA" or "the Digital Operational Resilience
Act". No rule on the document can find a name it does not contain, so the names the
Commission, supervisors and the trade press use for the most cited acts of financial, data and
digital regulation are listed here, keyed by the designation lexkb.core.text.refs reads from a
title. An operator adds others in the catalog's `aliases` (transforms.reading.metadata).
"""

from __future__ import annotations

POPULAR_NAMES: dict[str, tuple[str, ...]] = {
    "Regulation (EU) 2016/679": ("GDPR", "General Data Protection Regulation"),
    "Regulation (EU) 2018/1725": ("EUDPR",),
    "Regulation (EU) 2022/2554": ("DORA", "Digital Operational Resilience Act"),
    "Directive (EU) 2022/2555": ("NIS2", "NIS 2 Directive"),
    "Regulation (EU) 2024/1689": ("AI Act", "Artificial Intelligence Act"),
    "Regulation (EU) 2022/2065": ("DSA", "Digital Services Act"),
    "Regulation (EU) 2022/1925": ("DMA", "Digital Markets Act"),
    "Regulation (EU) 2023/2854": ("Data Act",),
    "Regulation (EU) 2022/868": ("Data Governance Act",),
    "Regulation (EU) 2023/1114": ("MiCA", "Markets in Crypto-Assets Regulation"),
    "Regulation (EU) No 575/2013": ("CRR", "Capital Requirements Regulation"),
    "Regulation (EU) No 600/2014": ("MiFIR",),
    "Regulation (EU) No 596/2014": ("MAR", "Market Abuse Regulation"),
    "Regulation (EU) No 648/2012": ("EMIR",),
    "Regulation (EU) No 909/2014": ("CSDR",),
    "Regulation (EU) No 910/2014": ("eIDAS",),
    "Regulation (EU) 2019/2088": ("SFDR", "Sustainable Finance Disclosure Regulation"),
    "Regulation (EU) 2020/852": ("Taxonomy Regulation",),
    "Regulation (EU) 2017/1129": ("Prospectus Regulation",),
    "Regulation (EU) 2024/1624": ("AMLR", "Anti-Money Laundering Regulation"),
    "Directive (EU) 2015/849": ("AMLD4", "Fourth Anti-Money Laundering Directive"),
    "Directive (EU) 2015/2366": ("PSD2", "Second Payment Services Directive"),
    "Directive (EU) 2022/2464": ("CSRD", "Corporate Sustainability Reporting Directive"),
    "Directive (EU) 2019/1937": ("Whistleblower Directive",),
}
