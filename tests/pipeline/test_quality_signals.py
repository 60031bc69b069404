"""extraction_quality drops on the defects a reader sees (junk units, running heads inside the
text, numbering lost in a numbered document) and stays at 1 on a clean document."""

from __future__ import annotations

from transforms.structure.quality import extraction_quality

CLEAN = [
    ("Article 1", "This Regulation lays down rules on the digital operational resilience."),
    ("Article 2(1)", "This Regulation applies to the following financial entities: banks."),
    ("Article 2(2)", "It does not apply to managers of alternative investment funds."),
    ("Article 3", "For the purposes of this Regulation, the following definitions apply."),
    ("Article 4(1)", "Financial entities shall implement the rules laid down in Chapter II."),
    ("Article 4(2)", "The competent authorities shall consider the application of that rule."),
]
FOOT = "L 333/{page} EN Official Journal of the European Union 27.12.2022"


def test_a_clean_numbered_document_scores_one():
    quality = extraction_quality(CLEAN)
    assert quality["score"] == 1.0
    assert quality["junk"] == quality["furniture"] == quality["unnumbered"] == 0.0


def test_junk_units_pull_the_score_down():
    with_junk = [*CLEAN[:3], ("p. 11 ¶ 9", "32 33"), ("p. 11 ¶ 10", "1 ),"), *CLEAN[3:]]
    quality = extraction_quality(with_junk)
    assert quality["junk"] == round(2 / 8, 4)
    assert quality["score"] < 0.8
    # A short line of text, or a numbered unit whose text is short, is not junk.
    short = [("p. 1 ¶ 3", "Whereas:"), *CLEAN, ("Article 5(b)", "(b) [***].")]
    assert extraction_quality(short)["junk"] == 0.0


def test_a_running_foot_inside_paragraphs_is_furniture():
    # The paragraphs that run over a page break carry the foot of the page they start on.
    starts = (4, 5, 6, 8, 9, 10)
    footed = [
        (ref, f"{text}\n{FOOT.format(page=page)}" if page % 2 == 0 else text)
        for (ref, text), page in zip(CLEAN, starts, strict=True)
    ]
    quality = extraction_quality(footed, list(starts))
    assert quality["furniture"] == round(4 / 6, 4)
    assert quality["score"] < 0.5
    # Without pages there is no page furniture to find.
    assert extraction_quality(footed)["furniture"] == 0.0
    # The same foot kept as units of its own: junk, not text.
    alone = [*CLEAN, *((f"p. {p} ¶ 1", FOOT.format(page=p)) for p in (4, 5, 6))]
    assert extraction_quality(alone, [*starts, 4, 5, 6])["junk"] == round(3 / 9, 4)


def test_a_line_of_text_that_recurs_is_not_furniture():
    pages = [1, 2, 3, 4, 5, 6]
    # Word for word, or with other numbers: it ends as text ends.
    repeated = [(ref, f"{text}\nSee Annex 1.") for ref, text in CLEAN]
    assert extraction_quality(repeated, pages)["furniture"] == 0.0
    amending = [
        (ref, f"{text}\n(a) paragraph {n} is replaced by the following:")
        for n, (ref, text) in enumerate(CLEAN, 1)
    ]
    assert extraction_quality(amending, pages)["furniture"] == 0.0
    # List items on one page are not a running head, though they end as one does.
    items = [*CLEAN, *((f"p. 7 ¶ {n}", f"List item {n}") for n in (1, 2, 3))]
    quality = extraction_quality(items, [*pages, 7, 7, 7])
    assert quality["furniture"] == quality["junk"] == 0.0


def test_text_placed_by_position_inside_a_numbered_document_is_unnumbered():
    lost = "The lessee shall recognise a right-of-use asset and a lease liability at the date."
    inside = [*CLEAN[:3], ("p. 11 ¶ 9", lost), *CLEAN[3:]]
    quality = extraction_quality(inside)
    total = sum(len(t) for _, t in inside)
    assert quality["unnumbered"] == round(len(lost) / total, 4)
    assert quality["score"] < 1.0
    # A preamble before the first unit is unnumbered in good documents too.
    assert extraction_quality([("p. 1 ¶ 1", lost), *CLEAN])["unnumbered"] == 0.0
    # A document with no numbered unit at all is not held to numbering.
    memo = [(f"¶ {n}", lost) for n in range(1, 5)]
    assert extraction_quality(memo)["score"] == 1.0


def test_paragraphs_placed_by_page_are_no_numbering_gaps():
    """A preamble on page 1 and an appendix's unnumbered lines on page 30 are places, not a
    numbering from page 1 to 30 with 28 pages lost."""
    placed = [
        ("p. 1 ¶ 2", "This Standard sets out the principles for the recognition of leases."),
        *CLEAN,
        ("p. 30 ¶ 4", "Appendix A defines the terms used in this Standard and is part of it."),
        ("p. 30 ¶ 4.2", "The definitions apply to every paragraph of the Standard above."),
    ]
    assert extraction_quality(placed)["gaps"] == 0.0
    assert extraction_quality(placed)["score"] == 1.0
