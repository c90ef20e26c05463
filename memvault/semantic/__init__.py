"""Search by meaning with a local model.

- `engine`: `Semantic`: a vault's semantic side: the parts below, and the searches that read them.
- `model`: a model found (package, folder, `off`) and run; `Model`: a vault's, or why it is off.
- `loaded_vectors`: `LoadedVectors`: the vectors in memory that searches read, kept in step.
- `embedding_worker`: `EmbeddingWorker`: what is missing, embedded (a server's thread, or `embed`).
- `prune`: vectors and chunk maps no note uses any more, dropped; `PruneSchedule`: a server's.
- `vector_store`: chunk maps and vectors in the index, kept through rebuilds by content hash.
- `vectors`: one model's chunk vectors in memory, searched by brute force (pure).
- `chunks`: a note cut by heading and paragraph within the model's budget (pure).
- `model_cache`: the default model quantised to int8 once per user.
- `reranker`: `Reranker`: the optional stage reordering a hybrid search's best notes in time.
- `cross_encoder`: a cross-encoder's folder found and run: a score for each question-passage pair.
- `bert_graph`: the default model's graph rebuilt with fused operators, to quantise (pure).
"""
