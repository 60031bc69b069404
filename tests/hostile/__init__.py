"""Hostile input: bounds, fuzzing, confinement to the index root, faults under concurrency."""
