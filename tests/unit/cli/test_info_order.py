"""``flintlock info`` lists vertices in pipeline order, sources first (issue 30)."""

from flintlock.cli.info import _latest_checkpoint, pipeline_order


def test_vertices_come_in_pipeline_order_whatever_order_they_are_given():
    vertices = [{"id": "sink"}, {"id": "map"}, {"id": "other-src"}, {"id": "src"}]
    nodes = [{"id": "sink", "inputs": [{"id": "map"}]},
             {"id": "map", "inputs": [{"id": "src"}, {"id": "other-src"}]},
             {"id": "other-src", "inputs": []}, {"id": "src", "inputs": []}]
    assert [v["id"] for v in pipeline_order(vertices, nodes)] == [
        "other-src", "src", "map", "sink"]


def test_the_checkpoint_line_reads_plainly():
    assert _latest_checkpoint({"counts": {"failed": 1}}, 0) == (
        "Latest checkpoint: none completed yet (1 failed)")
    line = _latest_checkpoint({"latest": {"completed": {"id": 7, "latest_ack_timestamp": 1000}},
                               "counts": {"completed": 7, "failed": 0}}, 4000)
    assert line == "Latest checkpoint: #7, completed 3 s ago (7 completed, 0 failed)"
