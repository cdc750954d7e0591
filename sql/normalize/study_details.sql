-- study_details: one row per study version with what get_trial_details shows as lists (sites, keywords, MeSH
-- terms), taken straight from the record's own lists, in the registry's order.
-- key: nct_id, content_hash
SELECT
    nct_id, content_hash,
    coalesce(list_transform(ps.contactsLocationsModule.locations,
                            x -> {'facility': x.facility, 'status': x.status, 'city': x.city, 'state': x.state,
                                  'zip': x.zip, 'country': x.country, 'lat': x.geoPoint.lat, 'lon': x.geoPoint.lon}),
             []) AS locations,
    coalesce(ps.conditionsModule.keywords, []) AS keywords,
    coalesce(list_transform(ds.conditionBrowseModule.meshes, m -> m.term), []) AS condition_mesh_terms,
    coalesce(list_transform(ds.conditionBrowseModule.ancestors, m -> m.term), []) AS condition_ancestor_terms,
    coalesce(list_transform(ds.interventionBrowseModule.meshes, m -> m.term), []) AS intervention_mesh_terms
FROM (SELECT nct_id, content_hash, d.protocolSection AS ps, d.derivedSection AS ds FROM new_versions)
