"""Reading a diagram's graph from a PNG, without looking at the D2.

d2's own renders have a known, consistent visual vocabulary: shapes are flat light fills inside a
blue stroke, connectors are curves in the same blue with filled triangles for arrowheads, node
labels are dark and edge labels grey; they are read by it. Drawings by other tools (or d2's dark
theme) are read by structure alone (:mod:`.generic`). The steps, one module each:

* :mod:`.image`      -- image files checked before decoding (empty, damaged, JPEG, too large);
* :mod:`.raster`     -- colour masks, stroke width, the fill palette of one image;
* :mod:`.generic`    -- shapes, text and connectors of any drawing, without colours;
* :mod:`.ocr`        -- tesseract words and boxes on a text-only copy of the image;
* :mod:`.shapes`     -- shapes from fill regions, their kind, containers and parents;
* :mod:`.strokes`    -- connectors in other colours than d2's blue, dashes bridged into lines;
* :mod:`.skeleton`   -- thinning and tracing of connector pixels into chains;
* :mod:`.connectors` -- chains joined into edges between shapes, arrowheads for direction;
* :mod:`.labels`     -- words grouped into node labels and edge labels;
* :mod:`.pipeline`   -- ``extract(png) -> dict`` in the parser's public JSON form;
* :mod:`.cache`      -- results stored by the image's content hash;
* :mod:`.align`      -- extracted nodes matched to D2 nodes by label (the scorer's view);
* :mod:`.evaluate`   -- node F1, directed-edge F1 and edge-label accuracy;
* :mod:`.runs`       -- extraction and scoring over a dataset, in a process pool.

Nothing here is imported eagerly: importing :mod:`benchmark.extract` does not load OpenCV.
"""
