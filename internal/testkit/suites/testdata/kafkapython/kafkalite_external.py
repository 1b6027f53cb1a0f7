"""A pytest plugin that points kafka-python's integration tests at a broker
that is already running, instead of the ZooKeeper and Kafka the tests'
fixtures download and launch.

kafka-python's test/fixtures.py has an ExternalService for KAFKA_URI, but
the tests call methods (create_topics, get_consumers, ...) only its
KafkaFixture has; this plugin replaces KafkaFixture.instance and
ZookeeperFixture.instance with a KafkaFixture that does not spawn a
process. Written for kafkalite; kafka-python's own files are unchanged.

Environment:
  KAFKALITE_BOOTSTRAP       host:port of the broker's PLAINTEXT listener.
  KAFKALITE_SASL_BOOTSTRAP  host:port of its SASL_PLAINTEXT listener, on
                            which the fixture's user (alice, alice-secret)
                            logs in with PLAIN, SCRAM-SHA-256 and
                            SCRAM-SHA-512; optional.

A fixture asking for a transport or SASL mechanism the broker does not
offer (SSL; SASL without KAFKALITE_SASL_BOOTSTRAP) skips its test with "not
applicable", and so does one asking for more than one broker: the report
card counts those apart from failures.
"""
import os

import pytest

from kafka import errors
from kafka.protocol.admin import CreateTopicsRequest
from kafka.protocol.metadata import MetadataRequest
from test import fixtures

_SASL_MECHANISMS = ('PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512')


class _NoProcess(object):
    """Stands for the ZooKeeper fixture and for a fixture's spawned process
    (child), neither of which there is."""
    host = None
    port = None

    def open(self):
        pass

    def close(self):
        pass

    def dump_logs(self):
        pass


class ExternalKafka(fixtures.KafkaFixture):
    """A KafkaFixture for a running broker: topics are made with
    CreateTopics (partitions as the fixture asks), never by auto-creation
    (a broker's num.partitions would decide their count)."""

    def __init__(self, host, port, broker_id, partitions, transport, sasl_mechanism):
        super(ExternalKafka, self).__init__(
            host, port, broker_id, _NoProcess(), None,
            partitions=partitions, transport=transport,
            sasl_mechanism=sasl_mechanism, auto_create_topic=False)
        self.child = _NoProcess()

    def open(self):
        if self._client is None:
            (self._client,) = self.get_clients(1, client_id='_internal_client')
        self.running = True

    def stop(self):
        self.running = False

    def close(self):
        if self._client is not None:
            self._client.close()
            self._client = None
        self.running = False

    def dump_logs(self):
        pass

    def _create_topic_via_admin_api(self, topic_name, num_partitions, replication_factor, timeout_ms=10000):
        # The fixture sends CreateTopics v0, which Kafka 4 no longer
        # serves (its range starts at v2): the same request at v2.
        request = CreateTopicsRequest[2]([(topic_name, num_partitions,
                                           replication_factor, [], [])], timeout_ms, False)
        response = self._send_request(request, timeout=timeout_ms)
        for topic_result in response.topic_errors:
            error_code = topic_result[1]
            if error_code != 0:
                raise errors.for_code(error_code)

    def get_topic_names(self):
        # The fixture lists topics with kafka-topics through ZooKeeper:
        # Metadata for every topic instead.
        response = self._send_request(MetadataRequest[1](None))
        return [topic[1] for topic in response.topics]


def _address(variable):
    addr = os.environ.get(variable)
    if not addr:
        raise RuntimeError('%s (host:port) is not set' % variable)
    host, _, port = addr.rpartition(':')
    return host, int(port)


def _zookeeper_instance(cls):
    return _NoProcess()


def _kafka_instance(cls, broker_id, zookeeper, zk_chroot=None, host=None, port=None,
                    transport='PLAINTEXT', replicas=1, partitions=2,
                    sasl_mechanism=None, auto_create_topic=True, tmp_dir=None):
    if broker_id != 0:
        pytest.skip('not applicable: needs %d brokers' % (broker_id + 1))
    transport = transport.upper()
    if transport == 'PLAINTEXT' and sasl_mechanism is None:
        host, port = _address('KAFKALITE_BOOTSTRAP')
    elif (transport == 'SASL_PLAINTEXT' and (sasl_mechanism or '').upper() in _SASL_MECHANISMS
          and os.environ.get('KAFKALITE_SASL_BOOTSTRAP')):
        host, port = _address('KAFKALITE_SASL_BOOTSTRAP')
    else:
        pytest.skip('not applicable: needs %s %s' % (transport, sasl_mechanism or ''))
    fixture = ExternalKafka(host, port, broker_id, partitions, transport, sasl_mechanism)
    fixture.open()
    return fixture


fixtures.ZookeeperFixture.instance = classmethod(_zookeeper_instance)
fixtures.KafkaFixture.instance = classmethod(_kafka_instance)
