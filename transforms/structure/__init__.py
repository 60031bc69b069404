"""Raw elements -> section tree and paragraph chunks that keep the document's own numbering.

Rooms, each with one job:
- document: structure_document, one document's (documents, sections, chunks), and its profile;
- outline: structure_legal_xml, the same tables from legal markup's outline rows
  (transforms.reading.legal_xml), which say what each row is, bypassing the builder;
- furniture: page furniture (running heads, page numbers, copyright lines) dropped first;
- builder, with contract_lines, document_lines and state: the state machine that walks the
  lines into sections and units;
- numbering: how each family of document numbers its units, one module a family;
- tree and ids: the section rows and stable identifiers every path shares;
- what a document says about itself: titles, contracts (parties, dates, name), inferred (type,
  authority, dates), designations, document_control, document_keys;
- what is read from the units once they stand: chunks (the rows a snapshot stores),
  defined_terms, clauses (clause labels) and quality (how much came out as citable structure).

Modules inside the package import each other directly, never this file; it only re-exports what
the rest of the project imports from `transforms.structure`.
"""

from transforms.structure.document import structure_document
from transforms.structure.furniture import drop_running_text
from transforms.structure.numbering.contract import RECITALS_HEADING
from transforms.structure.outline import structure_legal_xml

__all__ = ["RECITALS_HEADING", "drop_running_text", "structure_document", "structure_legal_xml"]
