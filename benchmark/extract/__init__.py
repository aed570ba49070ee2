"""Reading a diagram's graph from the PNG that d2 rendered, without looking at the D2.

The renders come from the official d2 binary, so their visual vocabulary is known and consistent:
shapes are flat light fills inside a blue stroke, connectors are curves in the same blue with filled
triangles for arrowheads, node labels are dark and edge labels grey. The steps, one module each:

* :mod:`.raster`     -- colour masks, stroke width, the fill palette of one image;
* :mod:`.ocr`        -- tesseract words and boxes on a text-only copy of the image;
* :mod:`.shapes`     -- shapes from fill regions, their kind, containers and parents;
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
