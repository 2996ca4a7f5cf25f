"""The benchmark and its feeds, outside the installed package: ``make bench`` runs them from a
checkout (``python -m bench.files``, ``bench.live``, ``bench.scale``); the tests use the feed
generators (``bench.gen_feed``, ``bench.make_feed``)."""
