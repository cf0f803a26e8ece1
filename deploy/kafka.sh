#!/usr/bin/env bash
# A local Apache Kafka 3.9 broker (KRaft, no ZooKeeper) for development and tests.
#   bash deploy/kafka.sh fetch            fetch kafka_2.13 and its runtime jars from Maven Central (cached)
#   bash deploy/kafka.sh start [--port N] [--keep]   format storage, start on loopback, wait until it serves
#   bash deploy/kafka.sh stop             stop it cleanly
#   bash deploy/kafka.sh status           exit 0 when it serves
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${KAFKA_CACHE:-$ROOT/.cache/kafka}"
VERSION="${KAFKA_VERSION:-3.9.1}"
LIB="$CACHE/lib-$VERSION"
PORT="${KAFKA_PORT:-19092}"
KEEP=0

log() { echo "[kafka] $*" >&2; }

fetch() {
  if [ -f "$LIB/.complete" ]; then return 0; fi
  command -v mvn >/dev/null || { log "Maven (mvn) is needed to fetch Kafka"; exit 1; }
  command -v java >/dev/null || { log "Java 17+ is needed to run Kafka"; exit 1; }
  mkdir -p "$CACHE/pom"
  cat > "$CACHE/pom/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local</groupId><artifactId>kafka-fetch</artifactId><version>1</version><packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka_2.13</artifactId><version>$VERSION</version></dependency>
    <dependency><groupId>org.slf4j</groupId><artifactId>slf4j-reload4j</artifactId><version>1.7.36</version></dependency>
  </dependencies>
</project>
POM
  log "fetching Kafka $VERSION from Maven Central"
  rm -rf "$LIB.tmp"
  (cd "$CACHE/pom" && mvn -q -B dependency:copy-dependencies -DoutputDirectory="$LIB.tmp" -DincludeScope=runtime)
  rm -rf "$LIB" && mv "$LIB.tmp" "$LIB" && touch "$LIB/.complete"
  log "cached $(ls "$LIB" | wc -l) jars in $LIB"
}

data_dir() { echo "$CACHE/data-$PORT"; }
pid_file() { echo "$CACHE/broker-$PORT.pid"; }

serving() {
  node -e '
    const { Kafka, logLevel } = require(process.argv[1]);
    const admin = new Kafka({ brokers: [process.argv[2]], logLevel: logLevel.NOTHING, retry: { retries: 0 }, connectionTimeout: 1000, requestTimeout: 2000 }).admin();
    admin.connect().then(() => admin.describeCluster()).then(() => admin.disconnect()).then(() => process.exit(0), () => process.exit(1));
  ' "$ROOT/node_modules/kafkajs" "127.0.0.1:$PORT" >/dev/null 2>&1
}

start() {
  fetch
  local pidf; pidf="$(pid_file)"
  if [ -f "$pidf" ] && kill -0 "$(cat "$pidf")" 2>/dev/null && serving; then
    log "already serving on 127.0.0.1:$PORT (pid $(cat "$pidf"))"
    echo "KAFKA_BROKERS=127.0.0.1:$PORT"
    return 0
  fi
  [ -f "$pidf" ] && stop
  local dir; dir="$(data_dir)"
  local ctrl=$((PORT + 1))
  [ "$KEEP" = 1 ] || rm -rf "$dir"
  mkdir -p "$dir/logs"
  cat > "$dir/server.properties" <<PROPS
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$ctrl
listeners=PLAINTEXT://127.0.0.1:$PORT,CONTROLLER://127.0.0.1:$ctrl
advertised.listeners=PLAINTEXT://127.0.0.1:$PORT
controller.listener.names=CONTROLLER
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
inter.broker.listener.name=PLAINTEXT
log.dirs=$dir/kraft-logs
num.partitions=12
offsets.topic.replication.factor=1
offsets.topic.num.partitions=12
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=4
group.initial.rebalance.delay.ms=0
# Let clients detect a dead member within seconds (failover tests use a 3 s session).
group.min.session.timeout.ms=1000
auto.create.topics.enable=true
delete.topic.enable=true
log.retention.hours=168
log.segment.bytes=67108864
num.network.threads=2
num.io.threads=4
PROPS
  cat > "$dir/log4j.properties" <<L4J
log4j.rootLogger=WARN, file
log4j.appender.file=org.apache.log4j.FileAppender
log4j.appender.file.File=$dir/logs/server.log
log4j.appender.file.layout=org.apache.log4j.PatternLayout
log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka=INFO
log4j.logger.org.apache.kafka=WARN
L4J
  local cp="$LIB/*"
  local jopts=(-Xms256m -Xmx768m -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -Djava.awt.headless=true -Dlog4j.configuration="file:$dir/log4j.properties")
  if [ ! -f "$dir/kraft-logs/meta.properties" ]; then
    java "${jopts[@]}" -cp "$cp" kafka.tools.StorageTool format -t "$(java -cp "$cp" kafka.tools.StorageTool random-uuid 2>/dev/null | tail -1)" \
      -c "$dir/server.properties" >"$dir/logs/format.log" 2>&1 || { log "formatting KRaft storage failed:"; cat "$dir/logs/format.log" >&2; exit 1; }
  fi
  nohup java "${jopts[@]}" -cp "$cp" kafka.Kafka "$dir/server.properties" >"$dir/logs/stdout.log" 2>&1 &
  echo $! > "$pidf"
  local started=$SECONDS
  until serving; do
    if ! kill -0 "$(cat "$pidf")" 2>/dev/null; then
      log "the broker exited while starting:"; tail -n 40 "$dir/logs/stdout.log" "$dir/logs/server.log" >&2 || true; rm -f "$pidf"; exit 1
    fi
    if [ $((SECONDS - started)) -gt 120 ]; then
      log "the broker did not serve within 120 s:"; tail -n 40 "$dir/logs/server.log" >&2 || true; stop; exit 1
    fi
    sleep 0.5
  done
  log "serving on 127.0.0.1:$PORT after $((SECONDS - started)) s (pid $(cat "$pidf"))"
  echo "KAFKA_BROKERS=127.0.0.1:$PORT"
}

stop() {
  local pidf; pidf="$(pid_file)"
  [ -f "$pidf" ] || { log "not running"; return 0; }
  local pid; pid="$(cat "$pidf")"
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    if kill -0 "$pid" 2>/dev/null; then log "did not stop in 30 s: SIGKILL"; kill -KILL "$pid" 2>/dev/null || true; fi
  fi
  rm -f "$pidf"
  log "stopped"
}

cmd="${1:-}"; shift || true
while [ $# -gt 0 ]; do
  case "$1" in
    --port) PORT="$2"; shift 2 ;;
    --keep) KEEP=1; shift ;;
    *) log "unknown option $1"; exit 2 ;;
  esac
done
case "$cmd" in
  fetch) fetch ;;
  start) start ;;
  stop) stop ;;
  status) serving ;;
  *) echo "usage: $0 fetch|start|stop|status [--port N] [--keep]" >&2; exit 2 ;;
esac
