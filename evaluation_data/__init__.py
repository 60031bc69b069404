"""The public data sets lexkb is trained and measured on, read in one place: CUAD (`cuad`),
ObliQA (`obliqa`), ContractNLI (`contractnli`), the GDPR's gold units (`gdpr`) and the questions
written here (`questions`); the six real documents built together (`realdocs`).

Why a package of its own: `training/` fits models on these sets and `benchmarks/` measures on
the same sets, split the same way (a held-out half that no choice looked at). Both must read
them alike, and neither may stand on the other's side for it: the benchmarks measure what
training made, so training imports no benchmark. This package imports nothing of the project
(tests/test_layering.py holds it to that); the files stay where they are, in ../shared/data and
benchmarks/questions.
"""
