"""Which paragraphs found answer, and in what order: the relevance model's chances, the
ranker learnt from people's questions and the features it reads, and answerability."""
