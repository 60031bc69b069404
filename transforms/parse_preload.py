"""Imported by the parse server before it forks a worker per file (transforms.isolation): the
partitioners' first-use loading happens here once, and every worker inherits it."""

from transforms import offline_nlp

offline_nlp.warm()
