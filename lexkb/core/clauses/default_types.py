"""lexkb's default contract clause types, each with the one-line description the zero-shot
classifier (lexkb.answers.classify) compares paragraphs with. Written here; kept apart so the
query module can name the types without loading the classifier."""

DEFAULT_TYPES: dict[str, str] = {
    "termination": "when and how a party may terminate or end the agreement, and notice of "
    "termination",
    "indemnity": "a party shall indemnify, defend and hold harmless the other party against "
    "claims, losses and damages",
    "limitation of liability": "limits or excludes a party's liability, caps damages, no "
    "liability for indirect or consequential damages",
    "confidentiality": "a party must keep the other party's confidential information secret "
    "and not disclose it",
    "dispute resolution": "how disputes are resolved: arbitration, mediation, courts and "
    "jurisdiction",
    "governing law": "which state's or country's law governs and is used to interpret the "
    "agreement",
    "force majeure": "a party is excused from performance because of events beyond its "
    "reasonable control such as acts of God, war or natural disasters",
    "assignment": "whether a party may assign or transfer the agreement or its rights to "
    "another party, with or without consent",
    "warranties": "a party represents and warrants facts or quality, or disclaims warranties",
    "payment terms": "fees, prices, invoices, when and how payments are due, and late payment",
}
