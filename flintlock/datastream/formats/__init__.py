"""Record formats under PyFlink's module paths (``pyflink.datastream.formats``): ``json`` and
``csv`` (de)serialization schemas for rows of a declared ``Types.ROW_NAMED(...)``, used by
connectors that take a schema (``KafkaSource.set_value_only_deserializer``, ``KafkaSink``'s
record serializer). Values are converted field by field (``_fields``); malformed input raises
``FormatParseError`` or, where the user asked for it, is skipped and counted.
"""
