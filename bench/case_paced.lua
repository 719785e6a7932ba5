-- A paced request mix for wrk: PATH_KIND=read (GET /cases/{id} over the ids in IDS), list
-- (GET /cases?limit=25), create (POST /cases) or spread (POST /cases, each request with the next
-- "<token> <case type id>" line of the file PAIRS, round robin: tenants and case types in turn);
-- RATE (requests/s over all connections, 0 = as fast as possible) spreads requests evenly by
-- delaying each connection's next request.
local token = os.getenv("TOKEN")
local kind = os.getenv("PATH_KIND") or "list"
local rate = tonumber(os.getenv("RATE") or "0")
local conns = tonumber(os.getenv("CONNS") or "32")
local ctype = os.getenv("CASE_TYPE")
local ids = {}
if kind == "read" then
  for line in io.lines(os.getenv("IDS")) do ids[#ids + 1] = line end
end
local spread = {}
if kind == "spread" then
  for line in io.lines(os.getenv("PAIRS")) do
    local t, c = line:match("^(%S+) (%S+)$")
    -- wrk.format takes the headers whole (not merged with wrk.headers), so each pair has its set.
    spread[#spread + 1] = {ctype = c, headers = {["Authorization"] = "Bearer " .. t, ["Content-Type"] = "application/json"}}
  end
end
if token then wrk.headers["Authorization"] = "Bearer " .. token end
wrk.headers["Content-Type"] = "application/json"
local n = 0
request = function()
  n = n + 1
  if kind == "read" then
    return wrk.format("GET", "/cases/" .. ids[math.random(#ids)])
  elseif kind == "create" then
    local body = '{"data": {"applicant": {"name": "Ann ' .. n .. '"}, "amount": ' .. (n % 900) ..
      ', "description": "water damage kitchen"}, "caseTypeId": "' .. ctype .. '"}'
    return wrk.format("POST", "/cases", nil, body)
  elseif kind == "spread" then
    local pair = spread[n % #spread + 1]
    local body = '{"data": {"applicant": {"name": "Ann ' .. n .. '"}, "amount": ' .. (n % 900) ..
      ', "description": "water damage kitchen"}, "caseTypeId": "' .. pair.ctype .. '"}'
    return wrk.format("POST", "/cases", pair.headers, body)
  end
  return wrk.format("GET", "/cases?limit=25")
end
if rate > 0 then
  delay = function() return conns * 1000 / rate end
end
done = function(summary, latency, requests)
  io.write(string.format("RESULT rps=%.1f p50_ms=%.1f p95_ms=%.1f p99_ms=%.1f non2xx=%d errors=%d\n",
    summary.requests / (summary.duration / 1e6), latency:percentile(50) / 1000, latency:percentile(95) / 1000,
    latency:percentile(99) / 1000, summary.errors.status, summary.errors.connect + summary.errors.read + summary.errors.timeout))
end
