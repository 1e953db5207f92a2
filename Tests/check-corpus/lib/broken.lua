local broken = {}

function broken.answer()
  cache = 42
  return cache
end

return broken
