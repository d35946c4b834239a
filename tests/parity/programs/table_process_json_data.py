# ruff: noqa
# (PyFlink's bundled example, kept in its own style: not linted)
################################################################################
#  Licensed to the Apache Software Foundation (ASF) under one
#  or more contributor license agreements.  See the NOTICE file
#  distributed with this work for additional information
#  regarding copyright ownership.  The ASF licenses this file
#  to you under the Apache License, Version 2.0 (the
#  "License"); you may not use this file except in compliance
#  with the License.  You may obtain a copy of the License at
#
#      http://www.apache.org/licenses/LICENSE-2.0
#
#  Unless required by applicable law or agreed to in writing, software
#  distributed under the License is distributed on an "AS IS" BASIS,
#  WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
#  See the License for the specific language governing permissions and
# limitations under the License.
################################################################################
"""PyFlink 2.3.0's bundled ``examples/table/process_json_data.py``, adapted for a defined output.

One change: ``parallelism.default`` is 1 (the print sink then prints no ``N>`` subtask prefix,
in input order). ``json_value`` on a ``from_elements`` table into a ``print`` table.

The ``logging.basicConfig(stream=sys.stdout, level=logging.INFO)`` of the ``__main__``
block is left out: it sends the engine's own INFO log messages to stdout.
"""
import logging
import sys

from pyflink.table import (EnvironmentSettings, TableEnvironment, DataTypes, TableDescriptor,
                           Schema)
from pyflink.table.expressions import col


def process_json_data():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    # parity: one subtask, so the print sink's lines carry no prefix and keep the input order
    t_env.get_config().set("parallelism.default", "1")

    # define the source
    table = t_env.from_elements(
        elements=[
            (1, '{"name": "Flink", "tel": 123, "addr": {"country": "Germany", "city": "Berlin"}}'),
            (2, '{"name": "hello", "tel": 135, "addr": {"country": "China", "city": "Shanghai"}}'),
            (3, '{"name": "world", "tel": 124, "addr": {"country": "USA", "city": "NewYork"}}'),
            (4, '{"name": "PyFlink", "tel": 32, "addr": {"country": "China", "city": "Hangzhou"}}')
        ],
        schema=['id', 'data'])

    # define the sink
    t_env.create_temporary_table(
        'sink',
        TableDescriptor.for_connector('print')
                       .schema(Schema.new_builder()
                               .column('id', DataTypes.BIGINT())
                               .column('data', DataTypes.STRING())
                               .build())
                       .build())

    table = table.select(col('id'), col('data').json_value('$.addr.country', DataTypes.STRING()))

    # execute
    table.execute_insert('sink') \
         .wait()
    # remove .wait if submitting to a remote cluster, refer to
    # https://nightlies.apache.org/flink/flink-docs-stable/docs/dev/python/faq/#wait-for-jobs-to-finish-when-executing-jobs-in-mini-cluster
    # for more details


if __name__ == '__main__':
    # parity: no logging.basicConfig(stream=sys.stdout, level=logging.INFO): it would put the
    # engine's own INFO log messages into the output

    process_json_data()
