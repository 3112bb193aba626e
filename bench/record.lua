-- wrk script for bench/load_bench.py `recording_wrk`: one judge per wrk thread (one keep-alive connection
-- each, -t N -c N), each sending its own plan of penalties with its own token, then writing "done <failures>"
-- and stopping. The plan file (the script's argument) has one line per request: judge token path player level.

local plans = {}
local counter = 0

function setup(thread)
  thread:set("judge", counter)
  counter = counter + 1
end

function init(args)
  mine = {}
  for line in io.lines(args[1]) do
    local j, token, path, player, level = line:match("^(%d+) (%S+) (%S+) (%d+) (%a)$")
    if tonumber(j) == judge then
      mine[#mine + 1] = wrk.format("POST", path, {
        ["Authorization"] = "Bearer " .. token,
        ["Content-Type"] = "application/json",
      }, '{"player": ' .. player .. ', "round": 1, "level": "' .. level .. '", "facts": "同時記録"}')
    end
  end
  answered, failures = 0, 0
end

function request()
  -- one connection: the next request goes out after the last answer, so it is the plan's next unanswered
  -- entry (wrk may ask more than once for one request)
  return mine[math.min(answered + 1, #mine)]
end

function response(status, headers, body)
  answered = answered + 1
  if status ~= 201 then failures = failures + 1 end
  if answered == #mine then
    io.write("done " .. failures .. "\n")
    io.flush()
    wrk.thread:stop()
  end
end

function done(summary, latency, requests)
  io.write(string.format("latency %d %d %d %d\n", summary.requests, latency:percentile(50),
    latency:percentile(95), latency:percentile(99)))
end
