//! The rendered virtual document (`transcript:` URIs) and its source map (DESIGN.md §2).
