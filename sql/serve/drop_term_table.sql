-- A term table ({name}) once the request is answered.
DROP TABLE IF EXISTS {name}
