"""The embedders (the local int8 model and Voyage AI) and the ONNX graphs that make the local
model fast: the build embeds paragraphs and a query embeds the question with the same code."""
