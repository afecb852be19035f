"""Text facts computed once per document: Markdown structure, cl100k tokens, the embedder's word pieces."""
