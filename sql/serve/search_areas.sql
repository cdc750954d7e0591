-- /api/v2/studies/search-areas: the search index's areas, by field, the heaviest first.
SELECT field, area, weight FROM search_area ORDER BY field, weight DESC, area
