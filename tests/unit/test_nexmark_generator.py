"""The Nexmark generator and DataStream source (issue 33): events are a pure function of their
number, in the model's proportions and id ranges, timed by the configured rate; splits cover
every event number exactly once at any parallelism; a reader restored from its snapshot goes
on exactly where it was."""

from collections import Counter

import pytest

from flintlock.common.errors import InvalidConfigValueError, UnknownConfigKeyError
from flintlock.datastream.connectors.nexmark import (
    Auction,
    Bid,
    NexmarkConfig,
    NexmarkSource,
    Person,
    from_options,
)
from flintlock.datastream.connectors.nexmark.config import BASE_TIME_MS
from flintlock.datastream.connectors.nexmark.generator import (
    AUCTION,
    BID,
    PERSON,
    event,
    last_auction,
    last_person,
)
from flintlock.datastream.connectors.nexmark.source import NexmarkReader, initial_splits
from flintlock.testing.clock import ManualClock


def drain(reader, batch=7):
    records, timestamps = [], []
    while True:
        out, finished = reader.poll(batch)
        records.extend(out)
        timestamps.extend(out.timestamps)
        if finished:
            return records, timestamps


def reader_for(config, splits):
    reader = NexmarkReader(config)
    reader.add_splits(list(splits))
    reader.notify_no_more_splits()
    return reader


def test_an_event_is_a_function_of_its_number_alone():
    config = NexmarkConfig(events=3000)
    first = [event(config, n) for n in range(3000)]
    backwards = [event(config, n) for n in reversed(range(3000))][::-1]
    assert first == backwards
    assert event(NexmarkConfig(), 1234) == first[1234]  # the bound does not change events


def test_kinds_follow_the_proportions_and_ids_count_up_from_1000():
    config = NexmarkConfig(events=50_000)
    events = [event(config, n) for n in range(50_000)]
    assert Counter(kind for kind, _, _ in events) == {PERSON: 1000, AUCTION: 3000, BID: 46_000}
    people = [values[0] for kind, values, _ in events if kind == PERSON]
    auctions = [values[0] for kind, values, _ in events if kind == AUCTION]
    assert people == list(range(1000, 2000))
    assert auctions == list(range(1000, 4000))


def test_bids_and_auctions_name_recent_people_and_auctions_with_hot_ones_most_often():
    config = NexmarkConfig(events=50_000)
    bids = Counter()
    for n in range(40_000, 50_000):
        kind, values, _ = event(config, n)
        if kind == BID:
            auction, bidder = values[0], values[1]
            newest_auction = last_auction(config, n) + 1000
            newest_person = last_person(config, n) + 1000
            assert newest_auction - config.num_in_flight_auctions <= auction
            assert auction <= newest_auction + 10
            assert newest_person - config.num_active_people <= bidder <= newest_person + 10
            bids[auction] += 1
        elif kind == AUCTION:
            assert 10 <= values[8] <= 14 and values[3] <= values[4]  # category; bid <= reserve
            assert values[6] > values[5]  # expires after it starts
    # the hot auctions (the first of the latest block of 100) take about half of the bids
    hot = sum(count for auction, count in bids.items() if (auction - 1000) % 100 == 0)
    assert 0.45 < hot / sum(bids.values()) < 0.55


def test_values_have_the_standard_shapes():
    config = NexmarkConfig()
    _, person, _ = event(config, 0)
    _, auction, _ = event(config, 1)
    _, bid, _ = event(config, 10)
    assert len(person[3]) == 19 and person[3].replace(" ", "").isdigit()  # credit card
    assert person[2].endswith(".com") and "@" in person[2]
    assert person[5] in ("AZ", "CA", "ID", "OR", "WA", "WY")
    assert auction[1] and auction[2] and auction[2] == auction[2].strip()
    assert bid[4].startswith("https://www.nexmark.com/")
    assert bid[6].isalpha() and 54 <= len(bid[6]) <= 82  # extra: 100 - 32 bytes +- 20 %
    assert 100 <= bid[2] <= 100_000_000  # cents: 10 ** (6u) dollars


def test_event_time_follows_the_rate_and_its_shape():
    config = NexmarkConfig(first_event_rate=1000, next_event_rate=1000)
    assert [config.timestamp_for(n) - BASE_TIME_MS for n in (0, 1, 999, 1000)] == [
        0, 1, 999, 1000]
    square = NexmarkConfig(first_event_rate=1000, next_event_rate=100, rate_period_s=20)
    # 10 s at 1000/s (10,000 events), then 10 s at 100/s, then again
    assert square.timestamp_for(10_000) - BASE_TIME_MS == 10_000
    assert square.timestamp_for(10_001) - BASE_TIME_MS == 10_010
    assert square.timestamp_for(11_000) - BASE_TIME_MS == 20_000
    sine = NexmarkConfig(first_event_rate=2000, next_event_rate=500, rate_shape="SINE")
    times = [sine.timestamp_for(n) for n in range(0, 3_000_000, 1000)]
    assert times == sorted(times)


def test_out_of_order_groups_permute_the_numbers_and_the_watermark_holds():
    config = NexmarkConfig(events=1000, out_of_order_group_size=10)
    adjusted = [config.adjusted_number(n) for n in range(1000)]
    assert sorted(adjusted) == list(range(1000)) and adjusted != list(range(1000))
    times = [event(config, n)[2] for n in range(1000)]
    assert all(times[m] >= config.watermark_for(n) for n in range(1000)
               for m in range(n, min(n + 30, 1000)))


@pytest.mark.parametrize("parallelism", [1, 2, 3])
def test_splits_cover_every_event_once_at_any_parallelism(parallelism):
    config = NexmarkConfig(events=1001)
    seen = []
    for split in initial_splits(config.events, parallelism):
        records, timestamps = drain(reader_for(config, [split]))
        seen.extend(zip(records, timestamps, strict=True))
    expected = [event(config, n) for n in range(1001)]
    kinds = {PERSON: Person, AUCTION: Auction, BID: Bid}
    assert Counter(seen) == Counter((kinds[k](*v), t) for k, v, t in expected)
    assert len(set(seen)) == 1001


def test_a_restored_reader_goes_on_where_its_snapshot_was():
    config = NexmarkConfig(events=500)
    splits = initial_splits(500, 2)
    whole, _ = drain(reader_for(config, splits))
    first = reader_for(config, splits)
    before = []
    for _ in range(5):
        before.extend(first.poll(13)[0])
    state = first.snapshot_state(1)
    first.poll(40)  # lost with the failure
    restored = NexmarkReader(config)
    restored.restore(state)
    restored.notify_no_more_splits()
    after, _ = drain(restored)
    assert before + after == whole


def test_a_rate_limited_reader_emits_what_the_clock_allows():
    clock = ManualClock()
    config = NexmarkConfig(events=100, first_event_rate=10, next_event_rate=10,
                           rate_limited=True)
    reader = NexmarkReader(config, clock=clock)
    reader.add_splits(initial_splits(100, 1))
    assert len(reader.poll(50)[0]) == 1  # event 0 at time 0
    clock.advance(1000)
    assert len(reader.poll(50)[0]) == 10  # events 1..10 by 1 s


def test_the_source_is_bounded_with_events_and_unbounded_without():
    assert NexmarkSource(NexmarkConfig(events=10)).is_bounded()
    assert not NexmarkSource().is_bounded()


def test_options_use_flinks_names_and_bad_ones_are_named():
    config = from_options({"events.num": "100", "tps": "5000", "bid.proportion": "96",
                           "bid.avg-size": "1kb", "rate.period": "10 min",
                           "rate.shape": "sine", "max-emit-speed": "false"})
    assert (config.events, config.first_event_rate, config.next_event_rate) == (100, 5000, 5000)
    assert (config.bid_proportion, config.avg_bid_bytes, config.rate_period_s) == (96, 1024, 600)
    assert config.rate_shape == "SINE" and config.rate_limited
    assert from_options({"events.num": "0"}).events is None
    with pytest.raises(UnknownConfigKeyError, match=r"events\.nu"):
        from_options({"events.nu": "1"})
    with pytest.raises(InvalidConfigValueError, match=r"first-event\.rate"):
        from_options({"first-event.rate": "fast"})
    with pytest.raises(InvalidConfigValueError, match=r"rate\.shape"):
        from_options({"rate.shape": "TRIANGLE"})
