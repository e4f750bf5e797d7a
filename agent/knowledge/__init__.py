"""The knowledge base: documents in, passages out (`KnowledgeBase` in `agent/ports.py`).

Pure text tools, no engine: `documents.py` (files to chunks with their document facts;
`formats.py` reads PDF, Word and HTML, `html_text.py` turns a page into Markdown),
`chunking.py` (text to sections and chunks; `chunks.py` the chunk record), `tokenize.py`
(Sudachi and Latin search terms), `lexical.py` (BM25-style sparse vectors, query terms
and keyword matching), `vectors.py` (a chunk's sparse vector, light enough for a worker
process), `rerank.py` (re-ranking hits by the query's words), `versions.py` (which copy
of a document is current).

The Qdrant adapters: `store.py` (the small `VectorStore` interface), `edge_client.py`
(Qdrant Edge in-process, the default), `server_client.py` (a Qdrant server through
qdrant-client), `local_migration.py` (moving an old local-mode directory to Edge),
`engine.py` (opening one of them), `sparse_index.py` (an in-memory index for
qdrant-client's local mode), and the knowledge base itself in layers:
`qdrant_collections.py` (errors, collection admin, index format) → `qdrant_writes.py`
(what ingestion stores) → `qdrant_kb.py` (`QdrantKnowledgeBase`: hybrid search,
`open_knowledge_base`). `ingest.py` stores files and folders in it (`grace ingest`);
`crawl.py` reads a documentation site (robots.txt, sitemap, conditional GETs) and
`source_ingest.py` dispatches a folder, a file or a URL and reports what changed.
"""
