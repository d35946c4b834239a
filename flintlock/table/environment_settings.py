"""PyFlink's ``EnvironmentSettings``: streaming or batch mode, the built-in catalog's names and
initial configuration of a ``TableEnvironment``. Immutable once built."""

from __future__ import annotations

from flintlock.common.config import Configuration
from flintlock.common.options import execution

__all__ = ["EnvironmentSettings"]

DEFAULT_CATALOG = "default_catalog"
DEFAULT_DATABASE = "default_database"


class EnvironmentSettings:
    """How a ``TableEnvironment`` is set up (build one with ``new_instance()``)."""

    class Builder:
        def __init__(self) -> None:
            self._configuration = Configuration()
            self._streaming = True
            self._catalog = DEFAULT_CATALOG
            self._database = DEFAULT_DATABASE

        def with_configuration(self, config: Configuration) -> EnvironmentSettings.Builder:
            self._configuration.add_all(config)
            mode = config.get_string(execution.RUNTIME_MODE.key, "")
            if mode:
                self._streaming = mode.lower() != "batch"
            return self

        def in_batch_mode(self) -> EnvironmentSettings.Builder:
            self._streaming = False
            return self

        def in_streaming_mode(self) -> EnvironmentSettings.Builder:
            self._streaming = True
            return self

        def with_built_in_catalog_name(self, built_in_catalog_name: str
                                       ) -> EnvironmentSettings.Builder:
            self._catalog = built_in_catalog_name
            return self

        def with_built_in_database_name(self, built_in_database_name: str
                                        ) -> EnvironmentSettings.Builder:
            self._database = built_in_database_name
            return self

        def build(self) -> EnvironmentSettings:
            configuration = Configuration(self._configuration)
            configuration.set_string(execution.RUNTIME_MODE.key,
                                     "streaming" if self._streaming else "batch")
            return EnvironmentSettings(configuration, self._catalog, self._database)

    def __init__(self, configuration: Configuration, catalog: str = DEFAULT_CATALOG,
                 database: str = DEFAULT_DATABASE) -> None:
        self._configuration = configuration
        self._catalog = catalog
        self._database = database

    def get_built_in_catalog_name(self) -> str:
        return self._catalog

    def get_built_in_database_name(self) -> str:
        return self._database

    def is_streaming_mode(self) -> bool:
        return self._configuration.get(execution.RUNTIME_MODE) != "batch"

    def get_configuration(self) -> Configuration:
        return self._configuration

    def to_configuration(self) -> Configuration:
        return self._configuration

    @staticmethod
    def new_instance() -> EnvironmentSettings.Builder:
        return EnvironmentSettings.Builder()

    @staticmethod
    def from_configuration(config: Configuration) -> EnvironmentSettings:
        return EnvironmentSettings.new_instance().with_configuration(config).build()

    @staticmethod
    def in_streaming_mode() -> EnvironmentSettings:
        return EnvironmentSettings.new_instance().in_streaming_mode().build()

    @staticmethod
    def in_batch_mode() -> EnvironmentSettings:
        return EnvironmentSettings.new_instance().in_batch_mode().build()
