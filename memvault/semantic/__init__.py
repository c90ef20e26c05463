"""Search by meaning with a local model.

- `engine`: `Semantic`: the model loaded in the background, the vectors in memory, the
  embedding that follows content hashes (a server's one low-priority worker).
- `model`: finding a model (the default package, a folder, `off`) and running it.
- `model_cache`: the default model quantised to int8 once per user; `bert_graph`: its graph
  rebuilt with onnxruntime's fused operators first.
- `chunks`: a note cut by heading and paragraph within the model's budget (pure).
- `vectors`: one model's chunk vectors in memory, searched by brute force (pure).
- `vector_store`: chunk maps and vectors in the index, kept through rebuilds by content hash.
- `prune`: vectors and chunk maps no note uses any more, dropped.
"""
