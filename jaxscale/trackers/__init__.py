"""Where runs live: readers of experiment trackers (TensorBoard event directories, MLflow stores,
W&B exports), each a :class:`~jaxscale.trackers.logged.Reader` registered in
:data:`jaxscale.trackers.sources.READERS`; :func:`jaxscale.trackers.sources.read_source` turns a
store's curves into a runs table (behind :func:`jaxscale.load_runs` and ``jaxscale runs``).

Adding a tracker is its module (a ``Reader``: how it recognises a file, a directory or a URI,
and how it reads), one line in ``READERS``, and its test.
"""
