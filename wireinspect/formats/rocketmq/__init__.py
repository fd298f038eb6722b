"""RocketMQ: remoting frames (:mod:`.remoting`, :mod:`.stream`), commit-log records
(:mod:`.commitlog`), consume queues and index files (:mod:`.store`); formats in :mod:`.format`."""
