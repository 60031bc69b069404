"""Keep each PDF text box unstructured finds as its own element.

After the fast strategy's layout pass, unstructured 0.27.32 folds the boxes that follow a list
item into it when their coordinates fall "within" the item (`_combine_list_elements`). In
numbered legal text nearly every paragraph is a list item, so an article heading and its title
("Article 66", "Urgency procedure") end up glued to the end of the previous paragraph; and as the
fold restarts from the item's original text at each box, all but the last box are dropped: the
GDPR PDF loses ten article headings that way. The structure builder rejoins wrapped lines itself,
so lexkb keeps pdfminer's boxes as they are.
"""

from __future__ import annotations


def _unchanged(elements: list, coordinate_system: object) -> list:
    return elements


def install() -> None:
    """Idempotent; call before `partition_pdf`."""
    import unstructured.partition.pdf as unstructured_pdf

    if not hasattr(unstructured_pdf, "_combine_list_elements"):
        raise RuntimeError(
            "unstructured.partition.pdf no longer has _combine_list_elements: "
            "re-check transforms/pdf_boxes.py against the installed unstructured"
        )
    unstructured_pdf._combine_list_elements = _unchanged
