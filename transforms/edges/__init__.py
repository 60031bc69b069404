"""The citation-edge graph: citations read from each paragraph, resolved to the chunks they
name, and kept between builds."""
