from lexkb.core.text.refs import document_names, normalize_ref, title_name
from lexkb.core.text.tokenize import tokenize


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


GDPR_TITLE = (
    "Regulation (EU) 2016/679 of the European Parliament and of the Council of 27 April 2016 on "
    "the protection of natural persons with regard to the processing of personal data and on the "
    "free movement of such data, and repealing Directive 95/46/EC (General Data Protection "
    "Regulation) (Text with EEA relevance)"
)


def test_a_long_title_is_known_by_the_name_it_gives_the_act_and_its_initials():
    assert title_name(GDPR_TITLE) == "General Data Protection Regulation"
    names = document_names("gdpr-en", GDPR_TITLE, None)
    assert {"General Data Protection Regulation", "GDPR"} <= set(names)
    # A short title is its own name; "(EU)" and "(Text with EEA relevance)" name nothing.
    assert title_name("Fund Rules (FUNDS)") is None
    assert (
        title_name("Regulation (EU) 2016/679 " + "x" * 100 + " (Text with EEA relevance)") is None
    )
