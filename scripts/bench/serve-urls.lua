-- wrk script for scripts/bench-serve: requests the paths listed in a file (one per line,
-- e.g. /d/small/17/0123456789abcdef), round-robin (default) or at random, over wrk's
-- keep-alive connections, and prints one JSON line ("JSON {...}") at the end with what
-- the report needs: requests, bytes, duration, errors and latency percentiles.
--
--   wrk -t1 -c64 -d20s -s scripts/bench/serve-urls.lua http://127.0.0.1:PORT -- PATHS [rr|random]
--
-- Requests are formatted once in init() (wrk's advice for fast servers); request() only
-- picks the next one. With several threads, each starts at its own offset of the list.
-- No response() function: wrk then skips handing headers and bodies to Lua.

local counter = 0
local threads = {}

function setup(thread)
  thread:set("id", counter)
  counter = counter + 1
  table.insert(threads, thread)
  for _, t in ipairs(threads) do
    t:set("nthreads", counter)
  end
end

local requests = {}
local n = 0
local i = 0
local random = false

function init(args)
  local file = args[1]
  if file == nil then
    error("serve-urls.lua: give the file of paths after --")
  end
  random = args[2] == "random"
  for line in io.lines(file) do
    if line ~= "" then
      n = n + 1
      requests[n] = wrk.format("GET", line)
    end
  end
  if n == 0 then
    error("serve-urls.lua: no paths in " .. file)
  end
  -- each thread starts at its own place in the list
  i = math.floor((id or 0) * n / (nthreads or 1)) % n
  math.randomseed(12345 + (id or 0))
end

function request()
  if random then
    return requests[math.random(n)]
  end
  i = i + 1
  if i > n then
    i = 1
  end
  return requests[i]
end

function done(summary, latency, requests_stats)
  local e = summary.errors
  io.write(string.format(
    'JSON {"requests": %d, "bytes": %d, "duration_us": %d, ' ..
    '"errors": {"connect": %d, "read": %d, "write": %d, "status": %d, "timeout": %d}, ' ..
    '"latency_us": {"min": %d, "mean": %.1f, "p50": %d, "p90": %d, "p99": %d, "max": %d}}\n',
    summary.requests, summary.bytes, summary.duration,
    e.connect, e.read, e.write, e.status, e.timeout,
    latency.min, latency.mean, latency:percentile(50), latency:percentile(90),
    latency:percentile(99), latency.max))
end
