"""Legal XML read natively: the structure taken from the markup, never re-derived from text.

The publishers' own XML says what a unit is ("<subsection>", "<P2>", "<PARAG>") and how it is
numbered, so no numbering pattern has to guess. Rooms, each with one job:
- read: the safe parser (no network, no entities, bounded size) and which dialect a file is;
- dialects: a file -> its element frame, by the dialect its root element names;
- outline: the element rows every dialect writes (document title, headings, units, notes);
- uslm (the US Code), clml (UK legislation), formex (the EU Official Journal), akn (Akoma
  Ntoso): one module a dialect, each citing units as its family does;
- usc_levels and uscode_html: the US Code's XHTML rendering (uscode.house.gov), whose fields
  and classes are markup too, with the labels' levels read by the Code's numbering scheme.

The readers write rows only; transforms.structure.outline makes them the (documents, sections,
chunks) tables.
"""
