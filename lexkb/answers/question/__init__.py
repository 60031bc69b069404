"""Reading the question before anything is searched: what it names and whether the index
holds it, whether it is about the index at all, and how a conversation's turns are read."""
