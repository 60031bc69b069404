"""Reading a paragraph for the tools that judge it: its sentences and what they oblige, its
quantities, a lead-in with its points, text addressed to a model, typed answers, the
support model's reading, and the paragraphs a verifier checks."""
