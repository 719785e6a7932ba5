-- A paced request mix for wrk: PATH_KIND=read (GET /cases/{id} over the ids in IDS), list
-- (GET /cases?limit=25) or create (POST /cases); RATE (requests/s over all connections, 0 = as fast
-- as possible) spreads requests evenly by delaying each connection's next request.
local token = os.getenv("TOKEN")
local kind = os.getenv("PATH_KIND") or "list"
local rate = tonumber(os.getenv("RATE") or "0")
local conns = tonumber(os.getenv("CONNS") or "32")
local ctype = os.getenv("CASE_TYPE")
local ids = {}
if kind == "read" then
  for line in io.lines(os.getenv("IDS")) do ids[#ids + 1] = line end
end
wrk.headers["Authorization"] = "Bearer " .. token
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
