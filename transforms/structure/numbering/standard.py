"""Numbering of rulebooks and standards: dotted rules ("4.2.3", "18.8.2A"), ISA-style
application material numbered in the margin ("A12"), and the "Guidance" blocks that follow a
rule and number their notes per rule ("4.2.2 Guidance 1")."""

from __future__ import annotations

import re

DOTTED = re.compile(r"^(\d+(?:\.\d+)+[A-Z]?)\.?\s+(\S.*)$", re.DOTALL)
APPLICATION = re.compile(r"^(A\d{1,3}[A-Z]?)\.?\s+(\S.*)$", re.DOTALL)
GUIDANCE = re.compile(r"^guidance(?:\s+notes?)?$", re.IGNORECASE)
# A standard's designation, which its publisher sets over its name on the first page and as
# its running head ("IFRS 16" over "Leases", "IFRS S2" over "Climate-related Disclosures"):
# part of its title, as the family cites it.
DESIGNATION = re.compile(
    r"^(?:IFRS|IAS|IFRIC|SIC|ISA|ISAE|ISRE|ISRS|ISQM|ISQC|IPSAS|ESRS|IFRS for SMEs)\s+[A-Z]?\d{1,4}$"
)
