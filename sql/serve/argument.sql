-- One value of a v2 search, where its statement read $name: its place ({position}) in a list ({list}) of serve_args.
(SELECT {list}[{position}] FROM serve_args)
