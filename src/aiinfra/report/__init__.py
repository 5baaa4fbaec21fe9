"""Results -> tables, JSON, markdown, SVG. Formats numbers; computes nothing."""
