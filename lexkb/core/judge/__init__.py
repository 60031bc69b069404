"""Models trained here that read two texts together: whether a passage supports,
contradicts or does not address a claim. They run as int8 ONNX with onnxruntime, hash-checked
and loaded on first use; how each is made is in training/ (torch there, never at run time)."""
