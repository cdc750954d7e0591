-- The versions whose eligibility accepts healthy volunteers ($accepted true) or does not ($accepted false).
SELECT version_no FROM trial_detail WHERE healthy_volunteers = $accepted::BOOLEAN
