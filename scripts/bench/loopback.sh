# Sourced by the benchmarks on PostgreSQL + Garage (bench-migrate, bench-readback,
# bench-statistics): what they run on loopback, started on free ports and stopped at exit.
#
#   PORT=$(free_port)        a free TCP port on 127.0.0.1 (the generated feeds name it)
#   loopback_nginx W ROOT [many]  only nginx (on 127.0.0.2–250 with `many`)
#   loopback_start W ROOT    nginx serving ROOT on $PORT (its configuration, pid and log
#                            under W/ngx), a throwaway PostgreSQL cluster (scripts/postgres:
#                            sets PGDIR, PGURL) and Garage (scripts/garage: sets GDIR, S3PORT,
#                            exports BENCH_S3_KEY, BENCH_S3_SECRET); all stopped at exit
#   loopback_scaled TAG      a new database TAG on that cluster; prints the `[catalog]` and
#                            `[blobs]` tables of a configuration that uses it and prefix TAG/
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

loopback_stop() {
  kill "$(cat "$LOOPBACK_W/ngx/nginx.pid" 2>/dev/null)" 2>/dev/null || true
  [ -z "${GDIR:-}" ] || scripts/garage stop "$GDIR"
  [ -z "${PGDIR:-}" ] || scripts/postgres stop "$PGDIR"
}

# nginx serving ROOT on $PORT (daemon; stopped at exit by loopback_stop): on 127.0.0.1,
# or with HOSTS=many on 127.0.0.2–127.0.0.250 (many publishers' hosts, so that plikt's
# per-host limit is not what is measured).
loopback_nginx() {
  LOOPBACK_W=$1
  local root=$2 listen="listen 127.0.0.1:$PORT;" h
  if [ "${3:-}" = many ]; then
    listen=""; for h in $(seq 2 250); do listen="$listen listen 127.0.0.$h:$PORT;"; done
  fi
  mkdir -p "$LOOPBACK_W/ngx/tmp"
  cat > "$LOOPBACK_W/ngx/nginx.conf" <<CONF
$([ "$(id -u)" != 0 ] || echo "user nobody nogroup;")
worker_processes 1;
daemon on;
pid $LOOPBACK_W/ngx/nginx.pid;
error_log $LOOPBACK_W/ngx/error.log warn;
events { worker_connections 4096; }
http {
  default_type application/octet-stream;
  types { application/rss+xml xml; text/html html; }
  access_log off;
  sendfile on; tcp_nodelay on; keepalive_requests 1000000; etag on;
  client_body_temp_path $LOOPBACK_W/ngx/tmp; proxy_temp_path $LOOPBACK_W/ngx/tmp;
  fastcgi_temp_path $LOOPBACK_W/ngx/tmp; uwsgi_temp_path $LOOPBACK_W/ngx/tmp;
  scgi_temp_path $LOOPBACK_W/ngx/tmp;
  server { $listen root $root; }
}
CONF
  GDIR=${GDIR:-}; PGDIR=${PGDIR:-}
  trap loopback_stop EXIT
  "$(command -v nginx || echo /usr/sbin/nginx)" -p "$LOOPBACK_W/ngx" -c "$LOOPBACK_W/ngx/nginx.conf"
}

loopback_start() {
  local key secret
  loopback_nginx "$1" "$2"
  read -r PGDIR PGURL < <(scripts/postgres start)
  read -r GDIR S3PORT key secret < <(scripts/garage start)
  export BENCH_S3_KEY=$key BENCH_S3_SECRET=$secret
}

loopback_scaled() {
  psql -q "$PGURL" -c "CREATE DATABASE $1" >/dev/null
  printf '[catalog]\nurl = "%s"\n[blobs]\ns3_endpoint = "http://127.0.0.1:%s"\nbucket = "plikt"\nregion = "garage"\nprefix = "%s/"\naccess_key_id_env = "BENCH_S3_KEY"\nsecret_access_key_env = "BENCH_S3_SECRET"\n' \
    "${PGURL%/*}/$1" "$S3PORT" "$1"
}
