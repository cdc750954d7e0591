-- After a catalog is built on a writer's connection: the connection is left without the root it was given.
RESET VARIABLE ctmirror_root;
