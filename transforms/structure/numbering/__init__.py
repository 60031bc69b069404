"""How each family of document numbers its units, one module a family.

A module holds the patterns that recognise its family's numbers at a line start and the small
helpers that read them; the builder (transforms.structure.builder and the line classifiers under
it) decides what a match opens. `generic` holds what every family shares. This package imports
nothing of its own: a family module imports `generic` or its siblings directly.
"""
