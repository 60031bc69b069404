"""The build in parts: the plan (runs of whole documents of bounded size), one part's tables,
citations across parts, topics on a bounded sample, the merge into the global tables, a sharded
snapshot's part files, and a step's sampled memory peak."""
