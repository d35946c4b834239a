"""Record and file formats under PyFlink's module paths (``pyflink.datastream.formats``):
``json``, ``csv`` and ``avro`` (de)serialization schemas for rows of a declared
``Types.ROW_NAMED(...)`` (or an Avro schema), used by connectors that take a schema
(``KafkaSource.set_value_only_deserializer``, ``KafkaSink``'s record serializer); file formats
for ``FileSource`` and ``FileSink``: CSV (``csv``, code in ``_csv_files``), Avro container
files (``avro``, reading in ``_avro_files``) and Parquet (``parquet``). Values are converted
field by field (``_fields``); malformed input raises ``FormatParseError`` (or a subclass naming
the file and offset) or, where the user asked for it, is skipped and counted. May import
``common``, the connectors' split reader base (``connectors._enumeration``) and, when a job is
built, ``connectors.file_system`` (``AvroInputFormat.as_source``).
"""
