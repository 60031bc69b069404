from lexkb.refs import normalize_ref
from lexkb.tokenize import tokenize


def test_legal_references_stay_whole_terms():
    terms = tokenize("under Article 6(1)(a) and Rules 18.8.2 and 9.3.1B, see § 512(c)(1)")
    assert "6(1)(a)" in terms
    assert "18.8.2" in terms
    assert "9.3.1b" in terms
    assert "512(c)(1)" in terms


def test_stopwords_dropped_and_words_stemmed():
    terms = tokenize("The operators of the platforms are disclosing")
    assert "the" not in terms and "of" not in terms
    assert terms == ["oper", "platform", "disclos"]


def test_obligation_words_are_kept():
    assert "must" in tokenize("a firm must not") and "shall" in tokenize("it shall")


def test_query_and_document_tokenize_alike():
    assert tokenize("RECONCILIATION of Client Money") == tokenize("reconciliation of client money")


def test_reference_spellings_normalize_to_one_key():
    assert (
        normalize_ref("Art. 6(1)")
        == normalize_ref("article 6 (1)")
        == normalize_ref("Article 6(1)")
    )
    assert normalize_ref("Rule 18.8.2") == normalize_ref("18.8.2")
    assert normalize_ref("§512(c)") == normalize_ref("§ 512(c)")
    assert normalize_ref("Article 6(1)") != normalize_ref("Article 6(2)")
