"""Imported by the parse server before it forks a worker per file (transforms.reading.isolation): the
partitioners' first-use loading happens here once, and every worker inherits it."""

from transforms.reading import offline_nlp

offline_nlp.warm()
