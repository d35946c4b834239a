"""The end-of-input rule of two-phase sink writers."""

from flintlock.datastream.connectors._delivery import DeliveryGuarantee, EndOfInputRule


def test_told_by_the_runtime_the_rule_follows_it():
    rule = EndOfInputRule()
    rule.set_checkpointing(True)
    assert not rule.publish_at_end()
    rule.set_checkpointing(False)
    rule.saw_checkpoint()
    assert rule.publish_at_end()


def test_told_nothing_the_rule_guesses_from_checkpoints_seen():
    rule = EndOfInputRule()
    assert rule.publish_at_end()
    rule.saw_checkpoint()
    assert not rule.publish_at_end()


def test_delivery_guarantees_are_pyflinks():
    assert [g.name for g in DeliveryGuarantee] == ["EXACTLY_ONCE", "AT_LEAST_ONCE", "NONE"]
