-- The versions whose eligibility accepts healthy volunteers ($accepted true) or does not ($accepted false).
SELECT version_no, 0.0 AS score FROM trial_detail WHERE healthy_volunteers = $accepted::BOOLEAN
