"""Documents: loading files, folders and other formats; encodings."""
